package datasets

// mt19937 is the Mersenne Twister of Matsumoto & Nishimura (1998), the
// generator behind numpy's legacy RandomState. It exists here only to
// reproduce the bayesian_benchmarks splits exactly (protocol bb-90-10):
// every other random draw in sgplab uses math/rand/v2's PCG.
type mt19937 struct {
	state [624]uint32
	index int
}

// newMT19937 seeds the generator as numpy's RandomState(seed) does for an
// integer seed (init_genrand: x_i = 1812433253 (x_{i−1} ⊕ (x_{i−1} ≫ 30)) + i).
func newMT19937(seed uint32) *mt19937 {
	m := &mt19937{index: 624}
	m.state[0] = seed
	for i := 1; i < 624; i++ {
		prev := m.state[i-1]
		m.state[i] = 1812433253*(prev^(prev>>30)) + uint32(i)
	}
	return m
}

// uint32 returns the next tempered 32-bit output.
func (m *mt19937) uint32() uint32 {
	const upper, lower, matrixA = 0x80000000, 0x7fffffff, 0x9908b0df
	if m.index >= 624 {
		for i := 0; i < 624; i++ {
			y := m.state[i]&upper | m.state[(i+1)%624]&lower
			v := m.state[(i+397)%624] ^ y>>1
			if y&1 != 0 {
				v ^= matrixA
			}
			m.state[i] = v
		}
		m.index = 0
	}
	y := m.state[m.index]
	m.index++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// float64 is numpy's random_sample: 53 random bits from two outputs.
func (m *mt19937) float64() float64 {
	a, b := m.uint32()>>5, m.uint32()>>6
	return (float64(a)*67108864 + float64(b)) / 9007199254740992
}

// interval draws uniformly from {0, …, max} by masked rejection, as numpy's
// legacy random_interval does for max < 2³².
func (m *mt19937) interval(max uint32) uint32 {
	if max == 0 {
		return 0
	}
	mask := max
	for s := uint(1); s < 32; s <<= 1 {
		mask |= mask >> s
	}
	for {
		if v := m.uint32() & mask; v <= max {
			return v
		}
	}
}

// numpyShuffle permutes p in place exactly as numpy's legacy
// RandomState.shuffle does for a 1-D array: Fisher–Yates from the end,
// j = random_interval(i) for i = n−1, …, 1.
func numpyShuffle(p []int, m *mt19937) {
	for i := len(p) - 1; i > 0; i-- {
		j := int(m.interval(uint32(i)))
		p[i], p[j] = p[j], p[i]
	}
}
