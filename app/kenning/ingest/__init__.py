"""kenning.ingest"""
