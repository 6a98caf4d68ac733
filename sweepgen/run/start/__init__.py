"""What is judged before any run of a sweep starts: a sweep that would not train as asked, refused."""
