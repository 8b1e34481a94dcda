"""modes"""
