package bucket_test

import (
	"fmt"

	"github.com/wsched/wsched/bucket"
)

// A bucket keeps packets while its stage is closed and reports how many
// arrived once it is open; consumers take priority packets one at a time
// and normal ones in batches.
func Example() {
	b := bucket.New[string]()
	n, _ := b.Add([]string{"a", "b", "c"}, false) // closed: kept, none arrived
	fmt.Println("arrived while closed:", n)
	b.Open()
	n, _ = b.Add([]string{"heavy"}, true)
	fmt.Println("arrived while open:", n)

	v, ok, _ := b.TakePriority()
	fmt.Println("priority:", v, ok)
	batch := make([]string, 2)
	k, _ := b.Take(batch)
	fmt.Println("batch:", batch[:k])
	fmt.Println("left:", b.Len())
	// Output:
	// arrived while closed: 0
	// arrived while open: 1
	// priority: heavy true
	// batch: [a b]
	// left: 1
}
