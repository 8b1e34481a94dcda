"""Theme colour values to sRGB: ``#rgb``/``#rrggbb``, ``oklch(L C H)``, ``okhsl(H S L)`` and 256-colour indexes.

OKLCH and OKHSL follow Björn Ottosson's Oklab definitions; OKLCH colours outside sRGB are brought in by
lowering chroma at constant lightness and hue (what CSS gamut mapping does).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_HEX = re.compile(r"^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_FUNC = re.compile(r"^(oklch|okhsl)\(\s*([^)]*)\)$", re.IGNORECASE)
_NUMBER = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(%|deg)?$")


class ColorError(ValueError):
    """A colour value that is not one of the accepted forms."""


@dataclass(frozen=True)
class RGB:
    r: int
    g: int
    b: int

    @property
    def hex(self) -> str:
        return f"#{self.r:02x}{self.g:02x}{self.b:02x}"

    def luminance(self) -> float:
        """Relative luminance (WCAG), 0 for black to 1 for white."""
        def linear(c: int) -> float:
            s = c / 255
            return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

        return 0.2126 * linear(self.r) + 0.7152 * linear(self.g) + 0.0722 * linear(self.b)


def _srgb_byte(linear: float) -> int:
    linear = min(1.0, max(0.0, linear))
    encoded = 12.92 * linear if linear <= 0.0031308 else 1.055 * linear ** (1 / 2.4) - 0.055
    return round(min(1.0, max(0.0, encoded)) * 255)


def oklab_to_linear_srgb(lightness: float, a: float, b: float) -> tuple[float, float, float]:
    l_ = lightness + 0.3963377774 * a + 0.2158037573 * b
    m_ = lightness - 0.1055613458 * a - 0.0638541728 * b
    s_ = lightness - 0.0894841775 * a - 1.2914855480 * b
    l, m, s = l_**3, m_**3, s_**3
    return (
        4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s,
        -1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s,
        -0.0041960863 * l - 0.7034186147 * m + 1.7076147010 * s,
    )


def _in_gamut(rgb: tuple[float, float, float], slack: float = 1e-4) -> bool:
    return all(-slack <= c <= 1 + slack for c in rgb)


def oklch_to_rgb(lightness: float, chroma: float, hue_degrees: float) -> RGB:
    """Lightness 0-1, chroma >= 0, hue in degrees; out-of-gamut colours keep L and H and lose chroma."""
    lightness = min(1.0, max(0.0, lightness))
    angle = math.radians(hue_degrees)
    low, high = 0.0, max(0.0, chroma)
    if not _in_gamut(oklab_to_linear_srgb(lightness, high * math.cos(angle), high * math.sin(angle))):
        for _ in range(24):
            mid = (low + high) / 2
            if _in_gamut(oklab_to_linear_srgb(lightness, mid * math.cos(angle), mid * math.sin(angle))):
                low = mid
            else:
                high = mid
        high = low
    r, g, b = oklab_to_linear_srgb(lightness, high * math.cos(angle), high * math.sin(angle))
    return RGB(_srgb_byte(r), _srgb_byte(g), _srgb_byte(b))


# --- OKHSL ----------------------------------------------------------------------------------------

_K1, _K2 = 0.206, 0.03
_K3 = (1 + _K1) / (1 + _K2)


def _toe_inv(x: float) -> float:
    return (x * x + _K1 * x) / (_K3 * (x + _K2))


def _max_saturation(a: float, b: float) -> float:
    """Largest S = C/L along hue (a, b) that stays in sRGB, by a polynomial guess and one Halley step."""
    if -1.88170328 * a - 0.80936493 * b > 1:
        k = (1.19086277, 1.76576728, 0.59662641, 0.75515197, 0.56771245)
        w = (4.0767416621, -3.3077115913, 0.2309699292)
    elif 1.81444104 * a - 1.19445276 * b > 1:
        k = (0.73956515, -0.45954404, 0.08285427, 0.12541070, 0.14503204)
        w = (-1.2684380046, 2.6097574011, -0.3413193965)
    else:
        k = (1.35733652, -0.00915799, -1.15130210, -0.50559606, 0.00692167)
        w = (-0.0041960863, -0.7034186147, 1.7076147010)
    saturation = k[0] + k[1] * a + k[2] * b + k[3] * a * a + k[4] * a * b
    kl = 0.3963377774 * a + 0.2158037573 * b
    km = -0.1055613458 * a - 0.0638541728 * b
    ks = -0.0894841775 * a - 1.2914855480 * b
    l_, m_, s_ = 1 + saturation * kl, 1 + saturation * km, 1 + saturation * ks
    f = w[0] * l_**3 + w[1] * m_**3 + w[2] * s_**3
    f1 = w[0] * 3 * kl * l_**2 + w[1] * 3 * km * m_**2 + w[2] * 3 * ks * s_**2
    f2 = w[0] * 6 * kl * kl * l_ + w[1] * 6 * km * km * m_ + w[2] * 6 * ks * ks * s_
    return saturation - f * f1 / (f1 * f1 - 0.5 * f * f2)


def _cusp(a: float, b: float) -> tuple[float, float]:
    """(L, C) of the most saturated in-gamut colour of hue (a, b)."""
    saturation = _max_saturation(a, b)
    rgb = oklab_to_linear_srgb(1, saturation * a, saturation * b)
    lightness = (1 / max(rgb)) ** (1 / 3)
    return lightness, lightness * saturation


def _gamut_intersection(a: float, b: float, lightness: float, cusp: tuple[float, float]) -> float:
    """Chroma where the line from (L, 0) towards (L, 1) leaves sRGB."""
    cusp_l, cusp_c = cusp
    if cusp_l >= lightness:  # below the cusp the gamut edge is the straight line to black
        return cusp_c * lightness / cusp_l
    t = cusp_c * (lightness - 1) / (cusp_l - 1)  # above it the line to white, then one Halley step
    kl = 0.3963377774 * a + 0.2158037573 * b
    km = -0.1055613458 * a - 0.0638541728 * b
    ks = -0.0894841775 * a - 1.2914855480 * b
    l_, m_, s_ = lightness + t * kl, lightness + t * km, lightness + t * ks
    l, m, s = l_**3, m_**3, s_**3
    ldt, mdt, sdt = 3 * kl * l_**2, 3 * km * m_**2, 3 * ks * s_**2
    ldt2, mdt2, sdt2 = 6 * kl * kl * l_, 6 * km * km * m_, 6 * ks * ks * s_
    best = math.inf
    for w in ((4.0767416621, -3.3077115913, 0.2309699292), (-1.2684380046, 2.6097574011, -0.3413193965),
              (-0.0041960863, -0.7034186147, 1.7076147010)):
        value = w[0] * l + w[1] * m + w[2] * s - 1
        d1 = w[0] * ldt + w[1] * mdt + w[2] * sdt
        d2 = w[0] * ldt2 + w[1] * mdt2 + w[2] * sdt2
        u = d1 / (d1 * d1 - 0.5 * value * d2)
        if u >= 0:
            best = min(best, -value * u)
    return t + (best if best != math.inf else 0.0)


def okhsl_to_rgb(hue_degrees: float, saturation: float, lightness: float) -> RGB:
    """Hue in degrees, saturation and lightness 0-1 (saturation relative to the gamut at that hue)."""
    saturation, lightness = min(1.0, max(0.0, saturation)), min(1.0, max(0.0, lightness))
    if lightness >= 1:
        return RGB(255, 255, 255)
    if lightness <= 0:
        return RGB(0, 0, 0)
    a_, b_ = math.cos(math.radians(hue_degrees)), math.sin(math.radians(hue_degrees))
    big_l = _toe_inv(lightness)
    cusp = _cusp(a_, b_)
    c_max = _gamut_intersection(a_, b_, big_l, cusp)
    st_s, st_t = cusp[1] / cusp[0], cusp[1] / (1 - cusp[0])
    k = c_max / min(big_l * st_s, (1 - big_l) * st_t)
    mid_s = 0.11516993 + 1 / (7.44778970 + 4.15901240 * b_ + a_ * (-2.19557347 + 1.75198401 * b_ + a_ * (
        -2.13704948 - 10.02301043 * b_ + a_ * (-4.24894561 + 5.38770819 * b_ + 4.69891013 * a_))))
    mid_t = 0.11239642 + 1 / (1.61320320 - 0.68124379 * b_ + a_ * (0.40370612 + 0.90148123 * b_ + a_ * (
        -0.27087943 + 0.61223990 * b_ + a_ * (0.00299215 - 0.45399568 * b_ - 0.14661872 * a_))))
    ca, cb = big_l * mid_s, (1 - big_l) * mid_t
    c_mid = 0.9 * k * math.sqrt(math.sqrt(1 / (1 / ca**4 + 1 / cb**4)))
    ca, cb = big_l * 0.4, (1 - big_l) * 0.8
    c_0 = math.sqrt(1 / (1 / ca**2 + 1 / cb**2))
    mid, mid_inv = 0.8, 1.25
    if saturation < mid:
        t = mid_inv * saturation
        k1 = mid * c_0
        k2 = 1 - k1 / c_mid
        chroma = t * k1 / (1 - k2 * t)
    else:
        t = (saturation - mid) / (1 - mid)
        k0 = c_mid
        k1 = (1 - mid) * c_mid * c_mid * mid_inv * mid_inv / c_0
        k2 = 1 - k1 / (c_max - c_mid)
        chroma = k0 + t * k1 / (1 - k2 * t)
    r, g, b = oklab_to_linear_srgb(big_l, chroma * a_, chroma * b_)
    return RGB(_srgb_byte(r), _srgb_byte(g), _srgb_byte(b))


# --- xterm 256 colours ----------------------------------------------------------------------------

_ANSI16 = [
    (0, 0, 0), (128, 0, 0), (0, 128, 0), (128, 128, 0), (0, 0, 128), (128, 0, 128), (0, 128, 128), (192, 192, 192),
    (128, 128, 128), (255, 0, 0), (0, 255, 0), (255, 255, 0), (0, 0, 255), (255, 0, 255), (0, 255, 255),
    (255, 255, 255),
]


def xterm_to_rgb(index: int) -> RGB:
    """The usual xterm palette value of 256-colour index ``index``."""
    if not 0 <= index <= 255:
        raise ColorError(f"256-colour index {index} is out of range (0-255)")
    if index < 16:
        return RGB(*_ANSI16[index])
    if index < 232:
        index -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return RGB(steps[index // 36], steps[(index // 6) % 6], steps[index % 6])
    grey = 8 + (index - 232) * 10
    return RGB(grey, grey, grey)


def _number(text: str, percent_scale: float, kind: str, source: str) -> float:
    match = _NUMBER.match(text.strip())
    if not match:
        raise ColorError(f"{source}: {kind} {text!r} is not a number")
    value = float(match.group(1))
    return value / 100 * percent_scale if match.group(2) == "%" else value


def parse_color(value: str) -> RGB:
    """A literal colour string (not a variable name, not ``""``) as sRGB."""
    text = value.strip()
    hexa = _HEX.match(text)
    if hexa:
        digits = hexa.group(1)
        if len(digits) == 3:
            digits = "".join(c * 2 for c in digits)
        return RGB(int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16))
    func = _FUNC.match(text)
    if not func:
        raise ColorError(f"{value!r} is not a colour (#rgb, #rrggbb, oklch(...), okhsl(...) or 0-255)")
    parts = func.group(2).replace(",", " ").replace("/", " ").split()
    if len(parts) != 3:
        raise ColorError(f"{value!r}: {func.group(1)}() takes three values")
    if func.group(1).lower() == "oklch":
        lightness = _number(parts[0], 1.0, "lightness", value)
        lightness = lightness if "%" in parts[0] or lightness <= 1 else lightness / 100
        chroma = _number(parts[1], 0.4, "chroma", value)
        return oklch_to_rgb(lightness, chroma, _number(parts[2], 360, "hue", value))
    hue = _number(parts[0], 360, "hue", value)
    return okhsl_to_rgb(hue, _number(parts[1], 1.0, "saturation", value), _number(parts[2], 1.0, "lightness", value))


def is_literal(value: object) -> bool:
    """True for a value that is a colour itself rather than a variable reference."""
    if isinstance(value, int) and not isinstance(value, bool):
        return True
    return isinstance(value, str) and (value == "" or value.startswith("#") or bool(_FUNC.match(value.strip())))
