"""Demo content: a short paper written for this project, so a new user has something to click through."""
