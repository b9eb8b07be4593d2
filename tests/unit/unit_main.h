/*
 * unit_main.h - the main() of a unit test binary: its tests run in order
 * as one cmocka group, and its exit status is the number that failed.
 *
 *   WR_UNIT_MAIN(setup, teardown, cmocka_unit_test(test_a), ...)
 *
 * setup, teardown: the group's fixtures (cmocka's CMFixtureFunction), or
 * NULL. Include it after <cmocka.h>.
 */
#ifndef WR_UNIT_MAIN_H
#define WR_UNIT_MAIN_H

#define WR_UNIT_MAIN(SETUP, TEARDOWN, ...)                                                         \
    int main(void)                                                                                 \
    {                                                                                              \
        const struct CMUnitTest tests[] = {__VA_ARGS__};                                           \
        return cmocka_run_group_tests(tests, SETUP, TEARDOWN);                                     \
    }

#endif
