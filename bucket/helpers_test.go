package bucket

import (
	"github.com/wsched/wsched/internal/watchdog"
)

// watch: see watchdog.Watch.
var watch = watchdog.Watch
