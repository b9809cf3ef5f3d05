"""Documents and sets of documents: corpus imports and uploads, id resolution, bitmaps and the pair's regions."""
