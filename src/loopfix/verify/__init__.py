"""Running original and patched code in child processes and comparing what they compute."""
