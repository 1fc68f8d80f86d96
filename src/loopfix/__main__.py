"""`python -m loopfix`: the same as the `loopfix` command."""

from loopfix.cli import main

main()
