"""What people bring to translate beyond plain sentences: word alignments (`aligned`), their own terms
(`glossary`), markup (`markup`) and documents (`documents`). Built on `hf_seq2seq.engines`; the server and the
CLI use it."""
