"""kenning.search"""
