//go:build linux && amd64

#include "textflag.h"

// func socket32(domain, typ, proto uint32) int32
//
// socket(2) through the i386 system call ABI (int $0x80, number 359 in
// the i386 table), from this 64-bit process. The kernel answers it when
// it has IA32 emulation; a seccomp filter that only knows the native ABI
// never sees it.
TEXT ·socket32(SB), NOSPLIT, $0-20
	MOVL	$359, AX
	MOVL	domain+0(FP), BX
	MOVL	typ+4(FP), CX
	MOVL	proto+8(FP), DX
	INT	$0x80
	MOVL	AX, ret+16(FP)
	RET
