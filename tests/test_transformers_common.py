"""transformers' own common model and config tests (`ModelTesterMixin`, `ConfigTester` of the installed
version, see `transformers_suite`) run against this model, set up the way transformers tests Marian.

Skipped here: `test_generation_tester_mixin_inheritance`, which asks that the test class also run
`GenerationTesterMixin`; the sdist does not ship it (see `transformers_suite`), so tests/test_decoding.py checks
`generate()`'s contracts instead. The mixin skips its accelerator-only tests by itself on a CPU machine.
"""

import unittest

import pytest
import torch
from transformers.models.auto import modeling_auto
from transformers_suite import import_common_tests

from hf_seq2seq import TransformerMTConfig, TransformerMTForConditionalGeneration, TransformerMTModel
from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import CACHE_NAME

# transformers' own contract for a model, at the oldest transformers admitted too
pytestmark = pytest.mark.floors

test_modeling_common, test_configuration_common = import_common_tests()
ModelTesterMixin, ids_tensor = test_modeling_common.ModelTesterMixin, test_modeling_common.ids_tensor
ConfigTester = test_configuration_common.ConfigTester

# transformers decides which class gets `labels` (and which is the base model) from its in-tree auto-mapping
# name tables; an in-tree model is listed there, so this one is too while the tests run
MAPPING_NAMES = {
    "MODEL_MAPPING_NAMES": TransformerMTModel.__name__,
    "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES": TransformerMTForConditionalGeneration.__name__,
}


class TransformerMTModelTester:
    """A tiny config and inputs, with the attributes the common tests read."""

    def __init__(self, parent, batch_size=13, seq_length=7, is_training=True, vocab_size=99):
        self.parent = parent
        self.batch_size = batch_size
        self.seq_length = self.encoder_seq_length = self.decoder_seq_length = seq_length
        self.is_training = is_training
        self.vocab_size = vocab_size
        self.hidden_size = 16
        self.num_hidden_layers = 2
        self.num_attention_heads = 4
        self.pad_token_id, self.eos_token_id = 0, 1

    def get_config(self) -> TransformerMTConfig:
        return TransformerMTConfig(
            vocab_size=self.vocab_size,
            d_model=self.hidden_size,
            encoder_layers=self.num_hidden_layers,
            decoder_layers=self.num_hidden_layers,
            encoder_attention_heads=self.num_attention_heads,
            decoder_attention_heads=self.num_attention_heads,
            encoder_ffn_dim=4,
            decoder_ffn_dim=4,
            dropout=0.1,
            attention_dropout=0.1,
            max_position_embeddings=100,
            pad_token_id=self.pad_token_id,
            eos_token_id=self.eos_token_id,
        )

    def prepare_config_and_inputs(self):
        input_ids = ids_tensor([self.batch_size, self.seq_length], self.vocab_size).clamp(2)
        input_ids[:, -1] = self.eos_token_id
        decoder_input_ids = ids_tensor([self.batch_size, self.seq_length], self.vocab_size)  # pads among them
        config = self.get_config()
        return config, {
            "input_ids": input_ids,
            "decoder_input_ids": decoder_input_ids,
            "attention_mask": input_ids.ne(config.pad_token_id),
            "decoder_attention_mask": decoder_input_ids.ne(config.pad_token_id),
        }

    def prepare_config_and_inputs_for_common(self):
        return self.prepare_config_and_inputs()


class TransformerMTModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (TransformerMTModel, TransformerMTForConditionalGeneration)
    is_encoder_decoder = True

    @classmethod
    def setUpClass(cls):
        for table, name in MAPPING_NAMES.items():
            getattr(modeling_auto, table)[TransformerMTConfig.model_type] = name

    @classmethod
    def tearDownClass(cls):
        for table in MAPPING_NAMES:
            getattr(modeling_auto, table).pop(TransformerMTConfig.model_type, None)

    def setUp(self):
        self.model_tester = TransformerMTModelTester(self)
        self.config_tester = ConfigTester(self, config_class=TransformerMTConfig, d_model=16)

    def test_config(self):
        self.config_tester.run_common_tests()

    @unittest.skip(
        "GenerationTesterMixin is not in the transformers sdist; tests/test_decoding.py covers generate()"
    )
    def test_generation_tester_mixin_inheritance(self):
        pass

    def test_decoder_cache_continues_the_uncached_output(self):
        """As Marian's tester checks: decoding 3 more tokens over a cache gives the uncached hidden states."""
        config, inputs = self.model_tester.prepare_config_and_inputs()
        del inputs["decoder_attention_mask"]  # every target token real
        model = TransformerMTModel(config).eval()
        first = model(**inputs, use_cache=True)
        next_tokens = ids_tensor((self.model_tester.batch_size, 3), config.vocab_size)
        decoder_input_ids = torch.cat([inputs["decoder_input_ids"], next_tokens], dim=-1)
        full = model(
            input_ids=inputs["input_ids"],
            attention_mask=inputs["attention_mask"],
            decoder_input_ids=decoder_input_ids,
        ).last_hidden_state
        continued = model(
            input_ids=inputs["input_ids"],
            attention_mask=inputs["attention_mask"],
            decoder_input_ids=next_tokens,
            **{CACHE_NAME: getattr(first, CACHE_NAME)},
        ).last_hidden_state
        torch.testing.assert_close(continued, full[:, -3:], atol=1e-4, rtol=1e-4)
