#!/usr/bin/env python
"""Plot training/validation loss, learning rate and validation BLEU of a Trainer run.

python scripts/plot_training.py runs/base figures/training.png
python scripts/plot_training.py runs/base/checkpoint-2000/trainer_state.json figures/training.png
"""

import argparse

from hf_seq2seq.plotting import plot_training_curves


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments, write the PNG, print its path."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "run", help="training output_dir, a checkpoint-<step> folder, or a trainer_state.json"
    )
    parser.add_argument("out", help="PNG file to write")
    args = parser.parse_args(argv)
    print(plot_training_curves(args.run, args.out))


if __name__ == "__main__":
    main()
