"""segbench.datasets"""
