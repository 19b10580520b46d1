"""The writes of releases, one module per noun: cut (freeze, hash, split), jobs (the cut and export kinds), exports."""
