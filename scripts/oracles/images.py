#!/usr/bin/env python3
"""Pillow, as an independent reader and writer of images.
  images.py write FILE FORMAT WIDTH HEIGHT   writes an image (FORMAT: JPEG or PNG) of that size
  images.py read FILE...                     prints `name<TAB>format<TAB>width<TAB>height` for each file Pillow can open,
                                             `name<TAB>error` for the others (decoding the whole image)"""
import os
import sys

from PIL import Image, ImageDraw

if sys.argv[1] == "write":
    path, kind, width, height = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    image = Image.new("RGB", (width, height), (40, 120, 60))
    ImageDraw.Draw(image).ellipse([0, 0, width - 1, height - 1], fill=(200, 180, 90))
    image.save(path, kind)
else:
    for path in sys.argv[2:]:
        name = os.path.basename(path)
        try:
            with Image.open(path) as image:
                image.load()
                print(f"{name}\t{image.format}\t{image.width}\t{image.height}")
        except Exception:
            print(f"{name}\terror")
