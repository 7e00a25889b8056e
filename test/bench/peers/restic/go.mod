module lifeboat.invalid/bench/peers/restic

go 1.25.8

require github.com/restic/restic v0.19.1 // indirect
