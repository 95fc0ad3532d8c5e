#!/usr/bin/env python3
"""Reads phone numbers as written in Greece, one per line on standard input, and prints each in E.164 with Google's
libphonenumber rules (the `phonenumbers` package), or INVALID."""
import sys

import phonenumbers

for line in sys.stdin:
    text = line.strip()
    try:
        number = phonenumbers.parse(text, "GR")
        valid = phonenumbers.is_valid_number(number)
    except phonenumbers.NumberParseException:
        valid = False
    print(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164) if valid else "INVALID")
