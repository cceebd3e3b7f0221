module fjord/bench/netns

go 1.26
