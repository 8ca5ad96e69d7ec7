"""Multi30k's English-French caption pairs (task 1) as a folder that `hf-seq2seq train --dataset` reads.

Writes `OUT/train.jsonl` (29,000 pairs) and `OUT/validation.jsonl` (1,014), one `{"en": ..., "fr": ...}` a
line, from the raw files of GitHub `multi30k/dataset` at a pinned commit (each file's sha256 checked), downloaded
or read from a local copy of its `data/task1/raw/` (`--raw-dir`). Multi30k's test sets are not written: they are
scored by name (`--standard_test_set multi30k_test_2016_flickr`, from the OPUS-MT test-set collection).
The recipe that mixes it with fra-eng is in docs/data.md (and its screen in docs/recipe.md):

    python scripts/prepare_multi30k.py data/multi30k-en-fr
    hf-seq2seq train --preset cpu --dataset data/multi30k-en-fr,fra-eng --dataset_probabilities 0.6,0.4 ...
"""

import argparse
import gzip
import hashlib
import json
import sys
import tempfile
from pathlib import Path

from hf_seq2seq.data.fra_eng import download_verified

COMMIT = "a3d2e0d26b56f3846f66a952536ffed4e401d05a"
URL = "https://raw.githubusercontent.com/multi30k/dataset/{commit}/data/task1/raw/{file}"
SHA256 = {
    "train.en.gz": "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f",
    "train.fr.gz": "622e75069e9f4c577425c4f277116ce66e63a2401c0a2312d90073cb12379a3c",
    "val.en.gz": "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28",
    "val.fr.gz": "ca3106f1a72390591d25f6c45cb4cd39dec4cd3f123e099748a3ce5256c160e9",
}
SPLITS = {"train": "train", "validation": "val"}  # our split name: Multi30k's file prefix


def raw_file(name: str, raw_dir: Path | None, download_dir: Path, verify: bool = True) -> Path:
    """Multi30k's raw file `name`: from `raw_dir` (its sha256 checked unless `verify` is off), else downloaded."""
    if raw_dir is not None:
        path = raw_dir / name
        if verify and hashlib.sha256(path.read_bytes()).hexdigest() != SHA256[name]:
            sys.exit(f"{path} is not Multi30k's {name} at commit {COMMIT[:12]} (sha256 differs)")
        return path
    path = download_dir / name
    url = URL.format(commit=COMMIT, file=name)
    download_verified(url, path, SHA256[name], "sha256", "Or fetch the files yourself and pass --raw-dir.")
    return path


def read_lines(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return handle.read().splitlines()


def write_pairs(raw_dir: Path | None, out: Path, verify: bool = True) -> dict[str, int]:
    """Write each split of :data:`SPLITS` as `out/<split>.jsonl`; returns the pairs written per split."""
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    with tempfile.TemporaryDirectory() as download_dir:
        for split, prefix in SPLITS.items():
            en, fr = (
                read_lines(raw_file(f"{prefix}.{lang}.gz", raw_dir, Path(download_dir), verify))
                for lang in ("en", "fr")
            )
            if len(en) != len(fr):
                sys.exit(f"{prefix}: {len(en)} English lines but {len(fr)} French ones")
            with open(out / f"{split}.jsonl", "w", encoding="utf-8") as handle:
                for source, target in zip(en, fr, strict=True):
                    handle.write(
                        json.dumps({"en": source.strip(), "fr": target.strip()}, ensure_ascii=False) + "\n"
                    )
            written[split] = len(en)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to write train.jsonl and validation.jsonl into")
    parser.add_argument("--raw-dir", type=Path, help="a local copy of multi30k/dataset's data/task1/raw/")
    args = parser.parse_args()
    for split, n in write_pairs(args.raw_dir, args.out).items():
        print(f"{args.out / split}.jsonl: {n:,} pairs")


if __name__ == "__main__":
    main()
