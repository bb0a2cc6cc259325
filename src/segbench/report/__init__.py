"""segbench.report"""
