"""Entry point: python3 -m apiserver --dir DIR [options]."""
import sys

from .server import Main

sys.exit(Main(sys.argv[1:]))
