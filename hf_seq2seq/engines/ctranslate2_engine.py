"""The CTranslate2 engine: :class:`CTranslate2Translator` translates with an export of
`hf_seq2seq.export.ctranslate2.export_ctranslate2` (`hf-seq2seq export ctranslate2`).

The export folder alone is enough: CTranslate2's model, the tokenizer, the saved `generation_config.json` and
the export's metadata (`hf_seq2seq.export.metadata`), checked by `hf_seq2seq.export.folder.check_export`.
The engine decodes as the model's `generate()` does with the same settings: the saved decoding (beams, length
penalty, n-gram ban, length rule and limits; where the saved config leaves one unset, the value `generate()`
uses, :data:`GENERATE_DEFAULTS`), and the batching, blank lines and truncation every engine shares
(`hf_seq2seq.engines.decoding.translate_in_batches`).

It imports neither torch nor transformers: the tokenizer and the saved decoding are read from the folder's files
(`hf_seq2seq.engines.export_files`), so a command or a server on an export starts in about a second.
"""

import os
from collections.abc import Sequence
from pathlib import Path

try:
    import ctranslate2
except ImportError as error:  # an optional extra
    raise ImportError(
        'exporting to or translating with CTranslate2 needs the ctranslate2 package: pip install "hf_seq2seq[deploy]"'
    ) from error
from hf_seq2seq.engines.alignment import DEFAULT_RULE, Alignment, AlignmentRule, align_pairs
from hf_seq2seq.engines.base import Translator, UnsupportedFeature
from hf_seq2seq.engines.decoding import Decoding, min_new_tokens, translate_in_batches
from hf_seq2seq.engines.export_files import SavedDecoding, load_tokenizer
from hf_seq2seq.engines.scoring import NO_SCORE, Score
from hf_seq2seq.export.folder import check_export
from hf_seq2seq.models.transformer_mt.length_rule import length_rule_limit

# What `generate()` uses for a setting that no generation config sets (None): the values transformers documents,
# which `generate()` fills in (tests/test_export.py checks them against transformers' own table and `generate()`).
GENERATE_DEFAULTS = {
    "max_length": 20,
    "num_beams": 1,
    "length_penalty": 1.0,
    "repetition_penalty": 1.0,
    "no_repeat_ngram_size": 0,
}


def new_token_limit(
    generation_config: SavedDecoding, source_length: int, decoding: Decoding, max_positions: int
) -> int:
    """The most new tokens of a batch whose longest source has `source_length` tokens, as the model's
    `generate()` allows: the fixed `decoding.max_new_tokens`, else the length rule (`length_rule_limit`), else
    the config's `max_new_tokens`, else its `max_length` less the decoder start token; with none of them set,
    `generate()` takes its default `max_length` as a number of new tokens, within the model's `max_positions`."""
    if decoding.max_new_tokens is not None:
        return decoding.max_new_tokens
    limit = length_rule_limit(generation_config, source_length)
    if limit is not None:
        return limit
    if generation_config.max_new_tokens is not None:
        return generation_config.max_new_tokens
    if generation_config.max_length is not None:
        return generation_config.max_length - 1
    return min(GENERATE_DEFAULTS["max_length"], max_positions - 1)


class CTranslate2Translator(Translator):
    """The CTranslate2 engine (a `hf_seq2seq.engines.base.Translator`): an export of
    `hf_seq2seq.export.ctranslate2.export_ctranslate2`, loaded: a `ctranslate2.Translator` (`.translator`),
    the tokenizer, the saved decoding, and the export's facts (`.metadata`, an
    `hf_seq2seq.export.metadata.ExportMetadata`: model type, longest source, parameters, quantization). Use it
    through `hf_seq2seq.engines.base.translate` / `hf_seq2seq.evaluation.evaluate.evaluate_translations`, or
    call :meth:`translate_sentences`.

    Its `precision` is the export's quantization: `precision` None keeps it, any other value must name it
    (a ValueError otherwise: another weight type is another export). `compute_type` "default" keeps the
    exported weight type. `intra_threads` is 1 unless given (0: CTranslate2's default, 4): this package's models do
    too little work per operation for more threads to pay (docs/deploy.md measures both).
    """

    engine = "ctranslate2"

    def __init__(
        self,
        export_dir: str | os.PathLike[str],
        device: str = "cpu",
        compute_type: str = "default",
        intra_threads: int = 1,
        inter_threads: int = 1,
        precision: str | None = None,
    ):
        export_dir = Path(export_dir)
        self.export_dir = export_dir
        self.metadata = check_export(export_dir, "ctranslate2").metadata
        self.precision = self.metadata.quantization
        if precision is not None and precision != self.precision:
            raise ValueError(
                f"{export_dir} is a CTranslate2 export with {self.precision} weights, which it keeps; for "
                f"precision {precision!r} export again (`hf-seq2seq export ctranslate2 --quantization ...`) or "
                "use the torch engine"
            )
        self.parameters = self.metadata.parameters
        self.translator = ctranslate2.Translator(
            str(export_dir),
            device=device,
            compute_type=compute_type,
            intra_threads=intra_threads,
            inter_threads=inter_threads,
        )
        self.tokenizer = load_tokenizer(export_dir)
        self.generation_config = SavedDecoding(export_dir)

    @property
    def max_source_length(self) -> int:
        return self.metadata.max_source_length

    @property
    def weights_bytes(self) -> int:
        """The export's `model.bin`, which CTranslate2 reads whole, in the weight type it keeps."""
        return (self.export_dir / "model.bin").stat().st_size

    def translate_sentences(
        self,
        sentences: Sequence[str],
        batch_size: int = 64,
        decoding: Decoding | None = None,
        max_source_length: int | None = None,
        progress: bool = False,
    ) -> list[str]:
        """Translations of `sentences` (`Translator.translate_sentences`): the same batches, blank lines,
        truncation and length limit as the torch engine, the saved decoding unless `decoding` says."""
        return self._translate(sentences, batch_size, decoding, max_source_length, progress)

    def translate_hypotheses(
        self,
        sentences: Sequence[str],
        count: int,
        batch_size: int = 64,
        decoding: Decoding | None = None,
        max_source_length: int | None = None,
    ) -> list[list[str]]:
        """Each sentence's `count` best translations (`Translator.translate_hypotheses`): CTranslate2's
        `num_hypotheses`, with at least `count` beams."""
        out = self._translate(sentences, batch_size, decoding, max_source_length, False, count)
        return [list(each) for each in out]

    def _translate(
        self,
        sentences: Sequence[str],
        batch_size: int,
        decoding: Decoding | None,
        max_source_length: int | None,
        progress: bool,
        hypotheses: int | None = None,
    ) -> list[str] | list[tuple[str, ...]]:
        """`translate_sentences`, or with `hypotheses` a tuple of that many best translations per sentence."""
        decoding = decoding or Decoding()
        if decoding.compile:
            raise ValueError("compiled decoding (--compile) is for the torch engine; CTranslate2 has its own")
        config = self.generation_config
        num_beams = decoding.num_beams or saved(config, "num_beams")
        length_penalty = (
            saved(config, "length_penalty") if decoding.length_penalty is None else decoding.length_penalty
        )
        no_repeat_ngram_size = (
            saved(config, "no_repeat_ngram_size")
            if decoding.no_repeat_ngram_size is None
            else decoding.no_repeat_ngram_size
        )
        fewest = min_new_tokens(config)  # at least one: the end token never comes first
        max_source_length = max_source_length or self.max_source_length

        def translate_batch(batch: list[str]) -> list:
            ids = self.tokenizer(batch, max_length=max_source_length, truncation=True)["input_ids"]
            # S: the padded source length
            limit = new_token_limit(config, max(map(len, ids)), decoding, self.max_source_length)
            results = self.translator.translate_batch(
                [self.tokenizer.convert_ids_to_tokens(row) for row in ids],
                beam_size=max(num_beams, hypotheses or 1),
                num_hypotheses=hypotheses or 1,
                length_penalty=length_penalty,
                max_decoding_length=limit,
                min_decoding_length=min(fewest, limit),  # the limit wins, as in generate()
                repetition_penalty=saved(config, "repetition_penalty"),
                no_repeat_ngram_size=no_repeat_ngram_size,
                max_input_length=0,  # truncated above, as the PyTorch path does
            )
            if hypotheses is None:
                return [self._decode(result.hypotheses[0]) for result in results]
            return [tuple(map(self._decode, result.hypotheses)) for result in results]

        return translate_in_batches(
            self.tokenizer, sentences, batch_size, max_source_length, translate_batch, progress,
            blank=("",) if hypotheses else "",
        )  # fmt: skip

    def _decode(self, tokens: list[str]) -> str:
        ids = self.tokenizer.convert_tokens_to_ids(tokens)
        return self.tokenizer.decode(ids, skip_special_tokens=True).strip()

    def score(self, sources: Sequence[str], targets: Sequence[str], batch_size: int = 64) -> list[Score]:
        """Each pair's `Score` (`Translator.score`) by CTranslate2's `score_batch`, which forces the target after
        the decoder's start token and scores its tokens and the end token it adds."""
        if len(sources) != len(targets):
            raise ValueError(f"{len(sources)} sources but {len(targets)} targets: give one target per source")
        limit = self.max_source_length
        out = [NO_SCORE] * len(sources)
        todo = [i for i, (s, t) in enumerate(zip(sources, targets, strict=True)) if s.strip() and t.strip()]
        if not todo:
            return out
        source = self.tokenizer([sources[i] for i in todo], max_length=limit, truncation=True)["input_ids"]
        target = self.tokenizer(
            text_target=[targets[i] for i in todo],
            max_length=limit - 1,
            truncation=True,
            add_special_tokens=False,
        )["input_ids"]  # the end token is CTranslate2's to add
        results = self.translator.score_batch(
            [self.tokenizer.convert_ids_to_tokens(row) for row in source],
            [self.tokenizer.convert_ids_to_tokens(row) for row in target],
            max_batch_size=batch_size,
            max_input_length=0,
        )
        for i, result in zip(todo, results, strict=True):
            out[i] = Score(sum(result.log_probs), len(result.log_probs))
        return out

    def align(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        batch_size: int = 64,
        rule: AlignmentRule = DEFAULT_RULE,
    ) -> list[Alignment]:
        """Word alignments (`Translator.align`) from the attention CTranslate2 returns while it is forced through
        each target (`translate_batch` with the target as prefix and `return_attention`): that of the layer and
        heads the export chose (its metadata's `alignment`: the last layer, heads averaged), whatever
        `rule.layer` says; `rule`'s shift and directions as on the torch engine."""
        if self.metadata.alignment is None:
            raise UnsupportedFeature(
                f"{self.export_dir} was exported before CTranslate2 exports returned the attention word alignments "
                "need (for --alignments, markup, documents and glossaries): export it again with "
                "`hf-seq2seq export ctranslate2`"
            )
        tokens = self.tokenizer.convert_ids_to_tokens

        def attention_of(source_ids: list[list[int]], target_ids: list[list[int]]) -> list:
            # each target but its end token forced as a prefix, and one step past it for the row of the step that
            # predicts the end token: [start] + target rows, as the torch engine's
            prefixes = [tokens(ids[:-1]) for ids in target_ids]
            results = self.translator.translate_batch(
                [tokens(ids) for ids in source_ids],
                target_prefix=prefixes,
                beam_size=1,
                max_decoding_length=max(map(len, prefixes)) + 1,
                return_attention=True,
                return_end_token=True,
                max_input_length=0,
            )
            return [result.attention[0] for result in results]  # (T, S) each: a row a decoded token

        return align_pairs(
            self.tokenizer, sources, targets, self.max_source_length, attention_of, batch_size, rule
        )

    def describe(self) -> dict:
        return {"quantization": self.precision}


def saved(generation_config: SavedDecoding, name: str):
    """A setting of the saved generation config, or `generate()`'s default where it is unset."""
    value = getattr(generation_config, name, None)
    return GENERATE_DEFAULTS[name] if value is None else value
