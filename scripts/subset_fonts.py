#!/usr/bin/env python
"""Write the fonts that translated PDF pages are set in (`hf_seq2seq/formats/documents/fonts/`): Tinos, Arimo
and Cousine (ChromeOS's core fonts, metric-compatible with Times, Helvetica and Courier; SIL Open Font License
1.1), regular, bold, italic and bold italic, subset with fontTools to the Latin, Greek and punctuation and symbol
ranges a Latin-script translation needs, so that the package carries about a tenth of their size. Reads Debian's
`fonts-croscore` (`apt-get install fonts-croscore`, version 20201225: Tinos and Arimo 1.33, Cousine 1.23); the
licence goes beside them as `OFL.txt`.

    python scripts/subset_fonts.py [--source /usr/share/fonts/truetype/croscore]
"""

import argparse
from pathlib import Path

from fontTools import subset

FAMILIES = ("Tinos", "Arimo", "Cousine")
STYLES = ("Regular", "Bold", "Italic", "BoldItalic")
RANGES = (
    (0x20, 0x7E),  # Basic Latin
    (0xA0, 0x24F),  # Latin-1, Latin Extended-A and -B
    (0x2B0, 0x2FF),  # spacing modifier letters
    (0x370, 0x3FF),  # Greek
    (0x1E00, 0x1EFF),  # Latin Extended Additional (Vietnamese)
    (0x2000, 0x206F),  # general punctuation: dashes, quotes, ellipsis, non-breaking spaces
    (0x20A0, 0x20CF),  # currency signs
    (0x2100, 0x215F),  # letterlike symbols, number forms
    (0x2190, 0x21FF),  # arrows
    (0x2200, 0x22FF),  # mathematical operators
    (0x25A0, 0x25FF),  # geometric shapes (list bullets)
    (0xFB00, 0xFB06),  # Latin ligatures
)
ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "hf_seq2seq" / "formats" / "documents" / "fonts"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", type=Path, default=Path("/usr/share/fonts/truetype/croscore"))
    args = p.parse_args()
    TARGET.mkdir(parents=True, exist_ok=True)
    options = subset.Options()
    options.layout_features = ["kern", "liga"]
    options.name_IDs = ["*"]  # the copyright and licence records stay in each file
    options.hinting = False  # a PDF is rendered at any size: hints are for screens at small sizes
    unicodes = [code for low, high in RANGES for code in range(low, high + 1)]
    for family in FAMILIES:
        for style in STYLES:
            font = subset.load_font(str(args.source / f"{family}-{style}.ttf"), options)
            subsetter = subset.Subsetter(options)
            subsetter.populate(unicodes=unicodes)
            subsetter.subset(font)
            subset.save_font(font, str(TARGET / f"{family}-{style}.ttf"), options)
    print(f"wrote {len(FAMILIES) * len(STYLES)} fonts to {TARGET}")


if __name__ == "__main__":
    main()
