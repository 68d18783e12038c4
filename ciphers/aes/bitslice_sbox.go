package aes

// subBytes applies the AES S-box to every byte of q with Boyar and Peralta's
// 113-gate straight-line program (32 AND, 81 XOR/XNOR; "A new combinational
// logic minimization technique with applications to cryptology", SEA 2010,
// and the circuit listing SLP_AES_113 of the Yale Circuit Minimization Team).
// Being only bitwise operations on whole planes, it has no table lookups and
// no data-dependent timing. In the circuit x0 is the most significant bit.
func subBytes(q *state) {
	x0, x1, x2, x3 := q[7], q[6], q[5], q[4]
	x4, x5, x6, x7 := q[3], q[2], q[1], q[0]

	// Top linear layer: 8 inputs to 22 linear forms.
	y14 := x3 ^ x5
	y13 := x0 ^ x6
	y9 := x0 ^ x3
	y8 := x0 ^ x5
	t0 := x1 ^ x2
	y1 := t0 ^ x7
	y4 := y1 ^ x3
	y12 := y13 ^ y14
	y2 := y1 ^ x0
	y5 := y1 ^ x6
	y3 := y5 ^ y8
	t1 := x4 ^ y12
	y15 := t1 ^ x5
	y20 := t1 ^ x1
	y6 := y15 ^ x7
	y10 := y15 ^ t0
	y11 := y20 ^ y9
	y7 := x7 ^ y11
	y17 := y10 ^ y11
	y19 := y10 ^ y8
	y16 := t0 ^ y11
	y21 := y13 ^ y16
	y18 := x0 ^ y16

	// Non-linear middle: inversion in GF(2^4)^2.
	t2 := y12 & y15
	t3 := y3 & y6
	t4 := t3 ^ t2
	t5 := y4 & x7
	t6 := t5 ^ t2
	t7 := y13 & y16
	t8 := y5 & y1
	t9 := t8 ^ t7
	t10 := y2 & y7
	t11 := t10 ^ t7
	t12 := y9 & y11
	t13 := y14 & y17
	t14 := t13 ^ t12
	t15 := y8 & y10
	t16 := t15 ^ t12
	t17 := t4 ^ t14
	t18 := t6 ^ t16
	t19 := t9 ^ t14
	t20 := t11 ^ t16
	t21 := t17 ^ y20
	t22 := t18 ^ y19
	t23 := t19 ^ y21
	t24 := t20 ^ y18

	t25 := t21 ^ t22
	t26 := t21 & t23
	t27 := t24 ^ t26
	t28 := t25 & t27
	t29 := t28 ^ t22
	t30 := t23 ^ t24
	t31 := t22 ^ t26
	t32 := t31 & t30
	t33 := t32 ^ t24
	t34 := t23 ^ t33
	t35 := t27 ^ t33
	t36 := t24 & t35
	t37 := t36 ^ t34
	t38 := t27 ^ t36
	t39 := t29 & t38
	t40 := t25 ^ t39

	t41 := t40 ^ t37
	t42 := t29 ^ t33
	t43 := t29 ^ t40
	t44 := t33 ^ t37
	t45 := t42 ^ t41
	z0 := t44 & y15
	z1 := t37 & y6
	z2 := t33 & x7
	z3 := t43 & y16
	z4 := t40 & y1
	z5 := t29 & y7
	z6 := t42 & y11
	z7 := t45 & y17
	z8 := t41 & y10
	z9 := t44 & y12
	z10 := t37 & y3
	z11 := t33 & y4
	z12 := t43 & y13
	z13 := t40 & y5
	z14 := t29 & y2
	z15 := t42 & y9
	z16 := t45 & y14
	z17 := t41 & y8

	// Bottom linear layer: 18 products to the 8 output bits (the XNORs add
	// the affine constant 0x63).
	t46 := z15 ^ z16
	t47 := z10 ^ z11
	t48 := z5 ^ z13
	t49 := z9 ^ z10
	t50 := z2 ^ z12
	t51 := z2 ^ z5
	t52 := z7 ^ z8
	t53 := z0 ^ z3
	t54 := z6 ^ z7
	t55 := z16 ^ z17
	t56 := z12 ^ t48
	t57 := t50 ^ t53
	t58 := z4 ^ t46
	t59 := z3 ^ t54
	t60 := t46 ^ t57
	t61 := z14 ^ t57
	t62 := t52 ^ t58
	t63 := t49 ^ t58
	t64 := z4 ^ t59
	t65 := t61 ^ t62
	t66 := z1 ^ t63
	s0 := t59 ^ t63
	s6 := ^(t56 ^ t62)
	s7 := ^(t48 ^ t60)
	t67 := t64 ^ t65
	s3 := t53 ^ t66
	s4 := t51 ^ t66
	s5 := t47 ^ t65
	s1 := ^(t64 ^ s3)
	s2 := ^(t55 ^ t67)

	q[7], q[6], q[5], q[4] = s0, s1, s2, s3
	q[3], q[2], q[1], q[0] = s4, s5, s6, s7
}

// invAffine is the affine map of InvSubBytes (FIPS-197 5.3.2):
// b'_i = b_(i+2) ^ b_(i+5) ^ b_(i+7) ^ (0x05)_i.
func invAffine(q *state) {
	q0, q1, q2, q3, q4, q5, q6, q7 := q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]
	q[0] = ^(q2 ^ q5 ^ q7)
	q[1] = q3 ^ q6 ^ q0
	q[2] = ^(q4 ^ q7 ^ q1)
	q[3] = q5 ^ q0 ^ q2
	q[4] = q6 ^ q1 ^ q3
	q[5] = q7 ^ q2 ^ q4
	q[6] = q0 ^ q3 ^ q5
	q[7] = q1 ^ q4 ^ q6
}

// invSubBytes applies the inverse S-box. With S(x) = A(x^-1) ^ 0x63 and L the
// inverse affine map (L(S(x)) = x^-1), InvS(y) = L(y)^-1 = L(S(L(y))): two
// cheap linear layers around the forward circuit, still table-free.
func invSubBytes(q *state) {
	invAffine(q)
	subBytes(q)
	invAffine(q)
}
