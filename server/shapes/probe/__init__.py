"""The shape probe: runs a module's real `forward` on meta tensors in the user's own Python.

`program` picks what of a file may run (the class and what it reaches; never top-level
side effects), `worker` is the script that runs in the user's interpreter (standard
library and torch only), and `client` starts, limits, times out and restarts it.
"""
