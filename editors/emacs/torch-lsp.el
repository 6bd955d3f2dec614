;;; torch-lsp.el --- torch-lsp in Emacs through eglot  -*- lexical-binding: t; -*-

;; Emacs 29 or newer (eglot built in), or Emacs 28 with eglot 1.9 or newer
;; (Debian: apt-get install elpa-eglot; else M-x package-install RET eglot).
;;
;; Use: paste into your init.el, or (load "/path/to/editors/emacs/torch-lsp.el").
;; `torch-lsp' must be on `exec-path' (start Emacs from the activated virtual
;; environment), or write its full path below, e.g. ("/path/to/.venv/bin/torch-lsp" "serve").
;;
;; What you get in Python buffers: diagnostics through Flymake (M-x flymake-show-buffer-diagnostics),
;; tensor shapes on hover through ElDoc (M-x eldoc), quick fixes and "Disable TLxxx for
;; this line" with M-x eglot-code-actions, and, with eglot 1.14 or newer (Emacs 29.1+),
;; shapes as inlay hints (eglot-inlay-hints-mode, on by default there).
;;
;; eglot runs one server per buffer: in Python buffers torch-lsp takes the place of
;; pylsp/pyright.  To keep another Python server as well, remove the `eglot-ensure'
;; hook below and start torch-lsp on demand with M-x eglot.

;;; Code:

(require 'eglot)

;; The mode list covers Emacs 29's tree-sitter mode too; Emacs 28 ignores the unknown name.
(add-to-list 'eglot-server-programs
             '((python-mode python-ts-mode) . ("torch-lsp" "serve")))

;; The same keys as [tool.torch-lsp] in pyproject.toml (`extend-select' may be written
;; :extendSelect); these override it.  eglot answers the server's workspace/configuration
;; request with the :torch-lsp entry.  Per project, set the same variable in the project's
;; .dir-locals.el: ((python-mode . ((eglot-workspace-configuration . (:torch-lsp (...)))))).
;; If you already configure other servers here, add the :torch-lsp entry to your plist instead.
(setq-default eglot-workspace-configuration
              '(:torch-lsp (;; :select ["TL1" "TL3"]
                            ;; :ignore ["TL401"]
                            ;; :severity (:TL301 "error" :TL4 "hint")
                            :shapes (:inlayHints t))))

;; Start torch-lsp when a Python file is opened.
(add-hook 'python-mode-hook #'eglot-ensure)
(add-hook 'python-ts-mode-hook #'eglot-ensure)

(provide 'torch-lsp)
;;; torch-lsp.el ends here
