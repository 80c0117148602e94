// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * noop: calls each of five unit functions once and exits: a command that costs nothing, for
 * unitmeter's fixed cost (start-up and tear-down) with 0, 1 or 5 --unit specs (make bench).
 */
#define NOOP_UNIT(name)                                                                    \
	__attribute__((noinline, used)) int name(int x)                                    \
	{                                                                                  \
		__asm__ volatile("" : "+r"(x));                                            \
		return x + 1;                                                              \
	}
NOOP_UNIT(fit_unit)
NOOP_UNIT(fit_b)
NOOP_UNIT(fit_c)
NOOP_UNIT(fit_d)
NOOP_UNIT(fit_e)

int main(void)
{
	return fit_e(fit_d(fit_c(fit_b(fit_unit(0))))) == 5 ? 0 : 1;
}
