import sys

from cellbench.cli import main

sys.exit(main())
