// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel selftest built unchanged but for the kselftest harness's time
 * limit per case, KSFT_CASE_LIMIT seconds instead of 30. pid_namespace's
 * pid_max.nested fills pid_max in nested namespaces with forks, which takes
 * close to 30 s under TCG with KASAN: at the stock limit a slow day killed it,
 * and a timeout must fail, not pass. The suite's own limit (kernel_selftests.sh)
 * still bounds it. KSFT_SOURCE names the test's source file.
 */
#include "kselftest_harness.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT KSFT_CASE_LIMIT

/* its own #include of the harness finds the guard and adds nothing */
#include KSFT_SOURCE
