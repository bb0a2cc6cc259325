"""segbench.boundary"""
