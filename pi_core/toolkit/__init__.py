"""toolkit"""
