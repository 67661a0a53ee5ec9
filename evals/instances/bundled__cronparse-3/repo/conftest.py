"""Put ``src/`` on the import path so the tests run from a plain checkout."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "src"))
