"""The flags of `hf-seq2seq train` beyond `Seq2SeqTrainingArguments`: the network and tokenizer, the data, and
what follows training, as the dataclasses that `HfArgumentParser` reads (`hf_seq2seq.cli.train`) and
`hf_seq2seq.training.recipe.run` takes. The defaults of each preset are in `hf_seq2seq.training.presets`."""

from dataclasses import dataclass, field


@dataclass
class ModelArguments:
    """The network and its tokenizer (sizes use the Marian/BART names of `TransformerMTConfig`)."""

    preset: str = field(default="cpu", metadata={"help": "named defaults: cpu, cpu-long, gpu, gpu-wmt, tiny"})
    model_name_or_path: str | None = field(default=None, metadata={"help": "fine-tune a saved model folder"})
    tokenizer_name_or_path: str | None = field(default=None, metadata={"help": "reuse a saved tokenizer"})
    vocab_size: int = field(default=8000, metadata={"help": "subword vocabulary when training a tokenizer"})
    tokenizer_model: str = field(default="bpe", metadata={"help": "bpe or unigram"})
    tokenizer_sample: int | None = field(
        default=None,
        metadata={"help": "train the tokenizer on the first this many pairs (set it when streaming)"},
    )
    d_model: int = 512
    encoder_layers: int = 6
    decoder_layers: int = 6
    attention_heads: int = field(default=8, metadata={"help": "heads of every attention sub-layer"})
    ffn_dim: int = field(default=2048, metadata={"help": "inner size of every feed-forward sub-layer"})
    dropout: float = 0.1
    attention_dropout: float = 0.0
    normalize_before: bool = field(default=False, metadata={"help": "pre-LN instead of the paper's post-LN"})
    max_position_embeddings: int = 256
    max_position_shift: int = field(
        default=0,
        metadata={
            "help": "in training, start each sequence's positions at a random offset in 0..this (SHAPE, Kiyono et "
            "al. 2021) instead of 0, so that the model learns relative positions; 0: the paper's"
        },
    )
    sdpa_backends: str | None = field(
        default=None,
        metadata={
            "help": "attention kernels training may use, comma-separated in order of preference, among flash, "
            "efficient, cudnn and math (default: PyTorch's choice, which an empty value asks for under a preset; the "
            "gpu presets: flash,efficient,math, since on a GPU cudnn builds a plan for each new batch shape)"
        },
    )

    def network_settings(self) -> dict:
        """The `TransformerMTConfig` fields these flags set for a network a run builds: its sizes, dropout, the
        place of its layer norms and its positions (`max_position_shift` aside, checked by its own flag)."""
        return dict(
            d_model=self.d_model,
            encoder_layers=self.encoder_layers,
            decoder_layers=self.decoder_layers,
            encoder_attention_heads=self.attention_heads,
            decoder_attention_heads=self.attention_heads,
            encoder_ffn_dim=self.ffn_dim,
            decoder_ffn_dim=self.ffn_dim,
            dropout=self.dropout,
            attention_dropout=self.attention_dropout,
            normalize_before=self.normalize_before,
            max_position_embeddings=self.max_position_embeddings,
        )


@dataclass
class DataArguments:
    """Where the pairs come from and how they are cut."""

    dataset: str = field(
        default="fra-eng",
        metadata={
            "help": "'fra-eng' (Tatoeba, downloaded or --data_path), 'multi30k', 'software-messages-v1' (software "
            "labels and messages, in the package; 'software-messages-v1-short': those of at most 8 words), a Hub "
            "dataset or a local file or folder; several, comma-separated, train on all of them (validation/test: the "
            "first's, or --eval_dataset; the cpu presets: fra-eng,software-messages-v1-short)"
        },
    )
    dataset_config: str | None = field(
        default=None,
        metadata={"help": "Hub dataset config, e.g. fr-en; with several datasets, comma-separated, one each"},
    )
    dataset_probabilities: str | None = field(
        default=None,
        metadata={
            "help": "with several datasets: interleave their train pairs, drawing from each with these "
            "comma-separated probabilities (e.g. 0.8,0.2) until all are read once; without: one after the other"
        },
    )
    eval_dataset: str | None = field(
        default=None,
        metadata={"help": "take validation/test from this dataset instead of the first of --dataset"},
    )
    data_path: str | None = field(default=None, metadata={"help": "local fra.txt or fra-eng.zip for fra-eng"})
    exclude_test_sets: list[str] = field(
        default_factory=lambda: ["default"],
        metadata={
            "help": "test sets whose sentences no train or validation pair may share (case, spacing and "
            "punctuation folded): names of the standard sets (tatoeba-test-v2021-08-07, "
            "multi30k_test_2016_flickr, newstest2014, ...) or files of one sentence a line; 'default': the "
            "corpus's own (fra-eng: the Tatoeba test set), 'none': keep every pair"
        },
    )
    source_lang: str = "en"
    target_lang: str = "fr"
    streaming: bool = field(
        default=False,
        metadata={
            "help": "stream the train split (needs --max_steps; each process reads its own part of it)"
        },
    )
    shuffle_buffer: int = field(
        default=10_000,
        metadata={
            "help": "with --streaming: shuffle the train stream through a buffer of this many pairs, and the "
            "order of its data files, anew each epoch (0: read in file order)"
        },
    )
    max_tokens_per_batch: int | None = field(
        default=None,
        metadata={
            "help": "train on batches of pairs of similar lengths holding at most this many source + target "
            "tokens, padding included (fairseq's --max-tokens), instead of --per_device_train_batch_size pairs; "
            "per process and per micro-batch (with --streaming: batched in pools of --shuffle_buffer pairs); 0: "
            "batches of pairs, over a preset that batches by tokens"
        },
    )
    cuda_graphs: bool | None = field(
        default=False,
        metadata={
            "help": "replay each training step's forward and backward as CUDA graphs, one pair per batch shape, "
            "recorded the second time the shape comes (this package's model on one CUDA GPU; not with "
            "--torch_compile or --gradient_checkpointing); the gpu preset's default: where the run can"
        },
    )
    max_source_length: int = 64
    max_target_length: int = 64
    concat_share: float = field(
        default=0.0,
        metadata={
            "help": "add this many joined examples per train pair (0.1: a tenth as many), each 2 to "
            "--concat_max_pairs random train pairs joined, source with source and target with target, within "
            "--max_source_length / --max_target_length: long inputs for a corpus of short pairs (0: none)"
        },
    )
    concat_max_pairs: int = field(default=4, metadata={"help": "the most pairs a joined example holds"})
    phrase_share: float = field(
        default=0.0,
        metadata={
            "help": "add this many phrase-pair examples per train pair: short phrases (1-3 source words) mined from "
            "the train split with the eflomal word aligner (pip install hf_seq2seq[fragments]), cached on disk "
            "(0: none; hf_seq2seq/data/fragments.py)"
        },
    )
    phrase_min_count: int = field(
        default=3, metadata={"help": "keep a phrase pair extracted at least this many times"}
    )
    variant_share: float = field(
        default=0.0,
        metadata={
            "help": "add this many casing and punctuation variants per train pair (title case, upper case, no "
            "final mark, lower-case first word) of the short train pairs, and of the phrase pairs with "
            "--phrase_share (0: none)"
        },
    )
    max_train_samples: int | None = None
    max_eval_samples: int | None = field(default=None, metadata={"help": "validation sources used for BLEU"})
    max_test_samples: int | None = None
    max_train_minutes: float | None = field(
        default=None,
        metadata={
            "help": "stop training (with a last evaluation and checkpoint) after this long (0: no time limit, "
            "e.g. to train a preset for --max_train_tokens alone)"
        },
    )
    max_train_tokens: int | None = field(
        default=None,
        metadata={
            "help": "stop training (with a last evaluation and checkpoint) once it has trained on this many "
            "tokens: source + target tokens, padding excluded, summed over processes (with "
            "--max_train_minutes too, the budget that runs out first stops it)"
        },
    )
    lr_decay_to_budget: bool = field(
        default=False,
        metadata={
            "help": "with --max_train_minutes or --max_train_tokens: after warmup, decay the learning rate "
            "linearly to 0 at the end of the budget (the one that runs out first; replaces --lr_scheduler_type); "
            "a --warmup_steps below 1 is then a share of the budget"
        },
    )


@dataclass
class FinalArguments:
    """What follows training: checkpoint averaging, and how the test split is decoded (the saved
    generation_config.json stays greedy)."""

    average_last: int | None = field(
        default=None,
        metadata={
            "help": "save the average of the weights of the last N checkpoints as the model (instead of the "
            "best checkpoint); keeps at least N + 1 checkpoints"
        },
    )
    num_beams: int | None = field(
        default=None, metadata={"help": "beams for the test evaluation (1: greedy)"}
    )
    length_penalty: float | None = field(default=None, metadata={"help": "beam score / length**this"})
    max_new_tokens: int | None = field(
        default=None, metadata={"help": "a fixed length limit for the test translations, instead of a*S+b"}
    )
    standard_test_set: str | None = field(
        default="tatoeba-test-v2021-08-07",
        metadata={
            "help": "after training, score this standard test set too, one reference a line as its leaderboard "
            "does (an English-French direction only; 'none' to skip)"
        },
    )
