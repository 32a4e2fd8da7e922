"""kenning.cli"""
