"""segbench.engine"""
