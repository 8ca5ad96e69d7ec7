"""What people bring to translate beyond plain sentences: word alignments (`aligned`), their own terms
(`glossary`), markup (`markup`, which reads HTML with `html_reading`) and documents (`documents`). Built on
`hf_seq2seq.engines`; the server and the CLI use it."""
