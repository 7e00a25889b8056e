module lifeboat.invalid/data-mover/set-times

go 1.22
