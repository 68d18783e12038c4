package legacy

import "testing"

func TestTripleDESVectors(t *testing.T) {
	for _, file := range []string{"tdes_sp800-67.txt", "tdes_sp800-20.txt"} {
		for _, v := range readVectors(t, file) {
			c, err := NewTripleDES(v.f["key"])
			if err != nil {
				t.Fatal(err)
			}
			checkKAT(t, c, v)
		}
	}
}
