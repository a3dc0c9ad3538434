"""Canvas: an indexed-colour raster (up to 256 colours) with the few primitives a
dashboard needs — filled rectangles, 1-2 px lines, dotted grid lines, bitmap text —
and its PNG encoding (colour type 3, one IDAT, zlib). No anti-aliasing: a palette
image of flat colours stays small and sharp. Not thread-safe.
"""
import struct
import zlib

from dashboard import font


class Canvas:
    def __init__(self, width, height, background=(0, 0, 0)):
        self.width, self.height = width, height
        self.palette = []
        self._index = {}
        bg = self.colour(background)
        self.pixels = bytearray([bg]) * (width * height)

    def colour(self, rgb):
        """The palette index of `rgb` (an (r, g, b) tuple), added on first use; raises
        ValueError past 256 colours."""
        rgb = tuple(int(c) for c in rgb)
        if rgb not in self._index:
            if len(self.palette) == 256:
                raise ValueError("a palette image holds at most 256 colours")
            self._index[rgb] = len(self.palette)
            self.palette.append(rgb)
        return self._index[rgb]

    def put(self, x, y, c):
        if 0 <= x < self.width and 0 <= y < self.height:
            self.pixels[y * self.width + x] = c

    def rect(self, x, y, w, h, rgb):
        """Fills [x, x+w) x [y, y+h), clipped to the canvas."""
        c = self.colour(rgb)
        x0, x1 = max(0, int(x)), min(self.width, int(x + w))
        if x1 <= x0:
            return
        row = bytes([c]) * (x1 - x0)
        for yy in range(max(0, int(y)), min(self.height, int(y + h))):
            self.pixels[yy * self.width + x0:yy * self.width + x1] = row

    def frame(self, x, y, w, h, rgb):
        """A 1 px outline of the rectangle."""
        self.rect(x, y, w, 1, rgb)
        self.rect(x, y + h - 1, w, 1, rgb)
        self.rect(x, y, 1, h, rgb)
        self.rect(x + w - 1, y, 1, h, rgb)

    def dotted_hline(self, x0, x1, y, rgb, period=4):
        c = self.colour(rgb)
        for x in range(int(x0), int(x1), period):
            self.put(x, int(y), c)
            self.put(x + 1, int(y), c)

    def line(self, x0, y0, x1, y1, rgb, width=2):
        """A straight line of `width` (1 or 2) px between two points (Bresenham)."""
        c = self.colour(rgb)
        x0, y0, x1, y1 = int(round(x0)), int(round(y0)), int(round(x1)), int(round(y1))
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err = dx + dy
        steps = dx - dy + 1  # a bound: one step per pixel along the longer axis and more
        for _ in range(steps):
            self.put(x0, y0, c)
            if width > 1:
                self.put(x0, y0 + 1, c)
                self.put(x0 + 1, y0, c)
            if x0 == x1 and y0 == y1:
                break
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def text(self, x, y, s, rgb, scale=2, bold=False):
        """Draws `s` with its top-left corner at (x, y), each font pixel a scale x scale
        square; bold draws it twice, 1 px apart. Returns the width drawn."""
        c = self.colour(rgb)
        for i, ch in enumerate(s):
            gx = x + i * font.ADVANCE * scale
            for row, bits in enumerate(font.glyph(ch)):
                for col in range(font.WIDTH):
                    if bits & (1 << (font.WIDTH - 1 - col)):
                        for k in range(2 if bold else 1):  # bold: again 1 px right
                            self._block(gx + col * scale + k, y + row * scale, scale, c)
        return text_width(s, scale)

    def _block(self, x, y, scale, c):
        for yy in range(y, y + scale):
            for xx in range(x, x + scale):
                self.put(xx, yy, c)

    def png(self):
        """The canvas as PNG bytes."""
        raw = bytearray()
        for y in range(self.height):
            raw.append(0)  # filter: none (a flat-colour image compresses well without)
            raw += self.pixels[y * self.width:(y + 1) * self.width]

        def chunk(kind, data):
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

        ihdr = struct.pack(">IIBBBBB", self.width, self.height, 8, 3, 0, 0, 0)
        plte = b"".join(bytes(rgb) for rgb in self.palette)
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"PLTE", plte)
                + chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b""))


def text_width(s, scale=2):
    """Width in px of `s` drawn at `scale` (no trailing space column)."""
    return max(0, len(s) * font.ADVANCE * scale - scale)


def text_height(scale=2):
    return font.HEIGHT * scale
