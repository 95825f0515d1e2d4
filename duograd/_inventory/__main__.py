"""``python -m duograd._inventory``: the table of torch's names built by duograd."""

import sys

from . import main

sys.exit(main(sys.argv[1:]))
