"""kenning.gui"""
