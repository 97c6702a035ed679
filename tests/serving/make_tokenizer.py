"""Writes tests/serving/tokenizer/: a word-level tokenizer over the mock server's 1,000 words (w0 … w999), so that
the load generators count tokens as the mock does, with no model hub to reach. Run once, in a scratch environment
with `tokenizers` and `transformers` (never dependencies of reportgen):

    python tests/serving/make_tokenizer.py
"""

from pathlib import Path

from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

vocabulary = {"[UNK]": 0, "[PAD]": 1, "[EOS]": 2, **{f"w{index}": index + 3 for index in range(1000)}}
core = Tokenizer(models.WordLevel(vocab=vocabulary, unk_token="[UNK]"))
core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]")
tokenizer.save_pretrained(Path(__file__).parent / "tokenizer")
