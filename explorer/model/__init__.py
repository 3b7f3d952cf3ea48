"""The models: attention with every intermediate, positional encodings, the transformer (encoder,
decoder, encoder–decoder) and recurrent networks.  Pure torch; imports nothing else of explorer."""
