"""``python -m evaluation EXPORT_DIR ...`` / ``python -m evaluation compare REPORT_DIR ...`` (no Django needed)."""
import sys

from evaluation.cli import main

if __name__ == "__main__":
    sys.exit(main())
