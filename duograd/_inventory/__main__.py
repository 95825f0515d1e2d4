"""``python -m duograd._inventory``: the table of torch's names built by duograd."""

import sys

from . import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
