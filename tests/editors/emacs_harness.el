;;; emacs_harness.el --- headless Emacs harness for tests/editors/test_emacs.py  -*- lexical-binding: t; -*-

;; Run as: emacs --batch -l editors/emacs/torch-lsp.el -l tests/editors/emacs_harness.el
;;
;; With the documented set-up loaded, visits TORCH_LSP_FILE (python-mode starts eglot
;; through the set-up's `eglot-ensure' hook) and does what a user does, through eglot's
;; own machinery: waits for the diagnostics Flymake shows, asks ElDoc for the
;; documentation at a tensor name (eglot answers it with a hover request), picks the
;; quick fix by its title in M-x eglot-code-actions, then saves the buffer and waits
;; for the diagnostics of the edited text.  What Emacs ended up with is written as JSON
;; to TORCH_LSP_OUT; the test judges it.
;;
;; Batch Emacs has no command loop, so the harness does the loop's part explicitly:
;; it runs `post-command-hook' once after visiting the file (the end of the command
;; that visited it, where `eglot-ensure' connects), and starts Flymake with the
;; command `flymake-start' instead of waiting for an idle moment.
;;
;; TORCH_LSP_HOVER and TORCH_LSP_FIX are JSON objects with "line" (0-based) and "char"
;; (a character column); TORCH_LSP_FIX also has "title".  TORCH_LSP_SETTINGS (optional,
;; JSON) replaces `eglot-workspace-configuration', the way a user sets it.

;;; Code:

(require 'cl-lib)
(require 'json)
(require 'eglot)
(require 'flymake)
(require 'eldoc)

(defvar torch-lsp-test--result nil
  "What the harness found so far: the JSON result, kept on errors.")

(defun torch-lsp-test--record (key value)
  (push (cons key value) torch-lsp-test--result)
  value)

(defun torch-lsp-test--setting (name)
  (let ((value (getenv name)))
    (when (or (null value) (string-empty-p value))
      (error "%s is not set; tests/editors/test_emacs.py sets it" name))
    value))

(defun torch-lsp-test--json-setting (name)
  (json-parse-string (torch-lsp-test--setting name) :object-type 'alist))

(defvar torch-lsp-test--timeout
  (/ (string-to-number (or (getenv "TORCH_LSP_TIMEOUT_MS") "30000")) 1000.0)
  "Seconds each wait may take before the harness reports what it had.")

(defun torch-lsp-test--wait (predicate)
  "Let processes and timers run until PREDICATE holds or the timeout passes.
Returns PREDICATE's last value."
  (let ((deadline (+ (float-time) torch-lsp-test--timeout))
        value)
    (while (and (not (setq value (funcall predicate)))
                (< (float-time) deadline))
      (accept-process-output nil 0.02))
    value))

(defun torch-lsp-test--goto (spot)
  (goto-char (point-min))
  (forward-line (alist-get 'line spot))
  (forward-char (alist-get 'char spot)))

(defun torch-lsp-test--diagnostics ()
  "Flymake's diagnostics in the current buffer, as JSON-ready alists."
  (vconcat
   (mapcar (lambda (diagnostic)
             (let* ((beg (flymake-diagnostic-beg diagnostic))
                    (lsp (cdr (assoc 'eglot-lsp-diag (flymake-diagnostic-data diagnostic)))))
               (save-excursion
                 (goto-char beg)
                 `((line . ,(1- (line-number-at-pos beg)))
                   (char . ,(- beg (line-beginning-position)))
                   (end_char . ,(- (flymake-diagnostic-end diagnostic) (line-beginning-position)))
                   (code . ,(plist-get lsp :code))
                   (source . ,(plist-get lsp :source))
                   (type . ,(symbol-name (flymake-diagnostic-type diagnostic)))
                   (text . ,(flymake-diagnostic-text diagnostic))))))
           (flymake-diagnostics))))

(defun torch-lsp-test--has-code-on-line (code line)
  (cl-some (lambda (d) (and (equal (alist-get 'code d) code) (equal (alist-get 'line d) line)))
           (torch-lsp-test--diagnostics)))

(defun torch-lsp-test--hover (spot)
  "(TEXT ERROR): what ElDoc displays at SPOT, filled by eglot's hover request."
  (torch-lsp-test--goto spot)
  (if (not (eglot--server-capable :hoverProvider))
      (list nil "the server does not advertise hoverProvider")
    (let* ((shown nil)
           (eldoc-display-functions
            (list (lambda (docs _interactive)
                    (setq shown (mapconcat #'car docs "\n"))))))
      (eldoc t)
      (cond ((not (torch-lsp-test--wait (lambda () shown)))
             (list nil (format "ElDoc displayed nothing within %s s" torch-lsp-test--timeout)))
            ((string-empty-p shown)
             (list nil "ElDoc had no documentation to display (the hover answer was empty)"))
            (t (list (substring-no-properties shown) nil))))))

(defun torch-lsp-test--apply-quick-fix (fix)
  "Runs M-x eglot-code-actions at FIX and picks FIX's title from its menu.
Records the titles eglot offered."
  (torch-lsp-test--goto fix)
  (let* ((offered nil)
         (title (alist-get 'title fix))
         ;; The minibuffer completion eglot's menu reads through: pick the title.
         (completing-read-function
          (lambda (_prompt collection &rest _)
            (setq offered (mapcar #'car collection))
            (torch-lsp-test--record 'offered_actions (vconcat offered))
            (or (car (member title offered))
                (error "eglot offered no action titled %S" title))))
         ;; As after a keyboard command (batch has none): eglot pops up a graphical
         ;; menu instead of completing-read when the last event was a mouse click.
         (last-nonmenu-event ?\r))
    (call-interactively #'eglot-code-actions)
    offered))

(defun torch-lsp-test--eglot-version ()
  (let ((library (or (locate-library "eglot") "")))
    (if (string-match "eglot-\\([0-9.]+\\)/" library) (match-string 1 library) library)))

(defun torch-lsp-test--run ()
  (let ((file (torch-lsp-test--setting "TORCH_LSP_FILE"))
        (hover-spot (torch-lsp-test--json-setting "TORCH_LSP_HOVER"))
        (fix (torch-lsp-test--json-setting "TORCH_LSP_FIX"))
        (settings (getenv "TORCH_LSP_SETTINGS")))
    (when (and settings (not (string-empty-p settings)))
      (setq-default eglot-workspace-configuration
                    (json-parse-string settings :object-type 'plist)))
    (find-file file)
    (run-hooks 'post-command-hook)
    (unless (torch-lsp-test--wait #'eglot-managed-p)
      (error "eglot did not start managing %s within %s s" file torch-lsp-test--timeout))
    (let ((server (eglot-current-server)))
      (torch-lsp-test--record 'server_name (plist-get (eglot--server-info server) :name))
      (torch-lsp-test--record 'major_mode (symbol-name major-mode)))
    (flymake-start)
    (unless (torch-lsp-test--wait #'flymake-diagnostics)
      (error "Flymake showed no diagnostics within %s s" torch-lsp-test--timeout))
    (let ((diagnostics (torch-lsp-test--record 'diagnostics (torch-lsp-test--diagnostics))))
      (pcase-let ((`(,text ,problem) (torch-lsp-test--hover hover-spot)))
        (torch-lsp-test--record 'hover text)
        (torch-lsp-test--record 'hover_error problem))

      (let ((fixed-code (cl-loop for d across diagnostics
                                 when (equal (alist-get 'line d) (alist-get 'line fix))
                                 return (alist-get 'code d)))
            (text-before (buffer-string)))
        (torch-lsp-test--apply-quick-fix fix)
        (torch-lsp-test--record 'text_after_fix (buffer-substring-no-properties (point-min) (point-max)))
        (when (equal text-before (buffer-string))
          (error "The buffer did not change after picking the code action"))
        ;; Saving sends the edited text (didChange, didSave); the server checks it again.
        (save-buffer)
        (torch-lsp-test--wait
         (lambda () (and (flymake-diagnostics)
                         (not (torch-lsp-test--has-code-on-line fixed-code (alist-get 'line fix))))))
        (torch-lsp-test--record 'diagnostics_after_fix (torch-lsp-test--diagnostics))))))

(let ((out (or (getenv "TORCH_LSP_OUT") "")))
  (torch-lsp-test--record 'emacs_version emacs-version)
  (torch-lsp-test--record 'eglot_version (torch-lsp-test--eglot-version))
  (condition-case failure
      (torch-lsp-test--run)
    (error (torch-lsp-test--record 'error (format "emacs_harness.el: %s" (error-message-string failure)))))
  (ignore-errors (eglot-shutdown (eglot-current-server) nil 5))
  (let ((coding-system-for-write 'utf-8))
    (with-temp-file out
      (insert (json-encode torch-lsp-test--result))))
  (kill-emacs 0))

;;; emacs_harness.el ends here
