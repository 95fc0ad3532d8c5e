"""Prints Orthodox Easter Sunday (python-dateutil's EASTER_ORTHODOX, on the Gregorian calendar) for each year given."""
import sys

from dateutil.easter import EASTER_ORTHODOX, easter

for year in sys.argv[1:]:
    print(easter(int(year), EASTER_ORTHODOX).isoformat())
