package offline

func round4(f float64) float64 {
	return float64(int64(f*10000+0.5)) / 10000
}
