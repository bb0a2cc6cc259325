"""segbench.algorithms"""
