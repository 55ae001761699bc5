def validate_document(doc): return None
