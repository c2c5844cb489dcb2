"""Print the text of a PDF, page by page."""
import sys

for path in sys.argv[1:]:
    print(f"would extract {path}")
