"""segbench.io"""
